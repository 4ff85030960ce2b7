"""The project: its root and files, configuration, the cache, the runner that checks a tree."""
