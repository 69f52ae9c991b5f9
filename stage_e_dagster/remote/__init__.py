"""Remote sources on the wire: store clients, the fleet-wide fetch limiter, and fetching bytes to a local cache."""
