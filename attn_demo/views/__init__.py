"""What the page draws of a translation, as plain numbers and Plotly figures: its grids, steps and titles (no gradio here)."""
