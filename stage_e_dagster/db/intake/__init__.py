"""Intake: sources and ingesting their files into `card`."""
