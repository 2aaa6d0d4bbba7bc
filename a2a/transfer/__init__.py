"""`cstp export` and `cstp import`: a tenant's decisions out to JSON Lines and back in."""
