#!/bin/sh
# The deployment script: it names the artifact, so it is the one place that decides .so or .pt2.
set -e
python compile.py "$PWD/net.so"
python serve.py "$PWD/net.so"
