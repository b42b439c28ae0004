"""Private plumbing of the authoring surface: context stacks, registries, id helpers."""
