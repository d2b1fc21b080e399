"""The case format: what users write and keep. Reading case files (strict YAML),
the JSON Schema, building a case for the engine, raw Kubernetes objects, scheduler
configuration files, and import from a cluster dump. It imports the engine, never
the workflow."""
