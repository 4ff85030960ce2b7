"""Crash-log triage and package inspection: explain, inspect, what AOTInductor generated."""
