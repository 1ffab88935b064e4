#!/usr/bin/env node
// Installed entry point: Node >= 24 runs the TypeScript sources directly (type stripping).
import "../cli/main.ts";
