"""The workflow: running cases and comparing with `expect`, failure reports, explain,
golden updates, diff of configurations, the command line and the pytest plugin."""
