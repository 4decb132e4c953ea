"""The spot simulator: the job and market model, online policies, the replay, the hindsight
optimum, online lifetime estimates and the dollars of a result."""
