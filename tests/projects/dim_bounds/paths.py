import os

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "classifier.pt2")
