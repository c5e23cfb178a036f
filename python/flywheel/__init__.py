"""FlyWheel for JAX programs: `flywheel.jax.optimize` runs the `flywheel-tpu` pass
pipeline over a function's StableHLO (see the repository README)."""
