"""The titles of the page's figures: a model's title and what the figure draws, on a phone as on a projector."""

TITLE_LINE = 24  # characters of a model's title on one line of a figure on a phone (a grid's title, Compare's axis)


def figure_title(model_title: str, what: str) -> str:
    """A grid figure's title, "model: what it draws". A model title longer than TITLE_LINE gets a line of its own:
    a grid is as wide as its title (figures._grid_layout), and one line would make a short sentence's grid three
    times as wide as its cells need on a phone."""
    joint = "<br>" if len(model_title) > TITLE_LINE else " "
    return f"{model_title}:{joint}{what}"


def grid_title(model_title: str, unit: str = "pieces", grid: str = "") -> str:
    """An alignment grid's title: the model's, what a cell is, and for a Transformer which of its grids (grid_name)."""
    cells = "α by word" if unit == "words" else "α<sub>tj</sub> by piece"
    return figure_title(model_title, f"{cells}{', ' + grid if grid else ''}")
