"""Where the artifacts live: one module, imported by the builder and the server."""
import os

ARTIFACT_DIR = os.environ.get("ARTIFACT_DIR", os.path.join(os.path.dirname(__file__), "artifacts"))
TOWER = os.path.join(ARTIFACT_DIR, "tower.so")
RANKER = os.path.join(ARTIFACT_DIR, "ranker.so")
