"""Pricing: billing math. `costs` holds the planner's cost-to-finish model."""
