"""Small models in plain JAX for FlyWheel's whole-model demo (bench/model.py)."""
