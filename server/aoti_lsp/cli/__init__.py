"""The command line: `--check`, `--fix`, reporters, triage subcommands."""
