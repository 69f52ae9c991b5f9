"""An import-linter contract type that import-linter lacks: no import cycle among the modules of a package, counting
every import grimp sees (function-level ones included).

import-linter's own `acyclic_siblings` judges packages as wholes (a cycle between `db.catalog` and `db.judgement`
counts even when their modules form no cycle); this one judges modules, which is what an import at load time
can trip over. Registered in pyproject.toml's `[tool.importlinter]` as `acyclic_modules`.
"""

from __future__ import annotations

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output
from importlinter.application import contract_utils
from importlinter.application.contract_utils import AlertLevel


def cycles(graph: ImportGraph, package: str) -> list[list[str]]:
    """The import cycles among `package`'s modules: each strongly connected set of two or more modules, sorted."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(f"{package}."))
    inside = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in modules:  # Tarjan's algorithm, iteratively (a package's import chains can be deep)
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root) & inside)))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.find_modules_directly_imported_by(step) & inside))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


class AcyclicModulesContract(Contract):
    """No import cycle among the modules of each of `packages`.

    Options: `packages` (the packages whose modules must form no cycle), `ignore_imports` (imports left out, each
    one an import that is known to close a cycle and is being removed elsewhere; say why beside it)."""

    type_name = "acyclic_modules"

    packages = fields.ListField(subfield=fields.ModuleField())
    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        removal = contract_utils.remove_ignored_imports_and_report(
            graph=graph, ignore_imports=self.ignore_imports, unmatched_alerting=AlertLevel.ERROR)  # type: ignore
        found = []
        for package in self.packages:  # type: ignore
            for component in cycles(graph, package.name):
                members = set(component)
                edges = []
                for importer in component:
                    for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
                        details = graph.get_import_details(importer=importer, imported=imported)
                        edges.append((importer, imported, [d["line_number"] for d in details]))
                found.append({"modules": component, "imports": edges})
        return ContractCheck(kept=not found, warnings=list(removal.warnings), metadata={"cycles": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for cycle in check.metadata["cycles"]:
            output.print_error(f"An import cycle among {len(cycle['modules'])} modules:")
            output.new_line()
            for importer, imported, lines in cycle["imports"]:
                output.print_error(f"-   {importer} -> {imported} (l.{', l.'.join(map(str, lines))})", bold=False)
            output.new_line()
