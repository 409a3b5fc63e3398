"""What is measured of a model's attention: its alignment error against human links, its coverage marks, its heads, its training timeline."""
