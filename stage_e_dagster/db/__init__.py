"""The application database by concern: each sub-package owns one kind of state and its queries. Functions
take a connection or an engine; URLs are resolved at the edges (commands, resources, the test kit)."""
