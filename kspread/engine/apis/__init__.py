"""The scheduler's configuration API, as upstream's pkg/scheduler/apis."""
