import os

ARTIFACT_DIR = os.path.join(os.path.dirname(__file__), "artifacts")
TOWER = os.path.join(ARTIFACT_DIR, "tower.pt2")
