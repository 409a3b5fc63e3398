"""The data sets: where the package reads them (the data home), how they are fetched, and the Tatoeba pairs as training reads them."""
