"""Judgement: evidence, identity groups, Stage D inputs, votes, the vote archive and consensus."""
