"""From text to findings: parse, names, facts (one layer every rule reads), the device and jagged domains, the engine that runs the rules."""
