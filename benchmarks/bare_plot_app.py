"""The floor for a phone's first grid: a bare Gradio app of the same version that opens on one Plotly
heatmap of the size of the page's opening grid (12 × 11), drawn as the page's grids are (gr.Plot)."""
import gradio as gr
import numpy as np
import plotly.graph_objects as go


def heatmap() -> go.Figure:
    weights = np.random.default_rng(0).dirichlet(np.ones(11), size=12)  # 12 French × 11 English pieces
    return go.Figure(go.Heatmap(z=weights, colorscale="Viridis", zmin=0, zmax=1))


with gr.Blocks() as demo:
    plot = gr.Plot(elem_id="left-grid")
    demo.load(heatmap, None, plot)

if __name__ == "__main__":
    demo.launch()
