"""From English to a traced French translation: greedy and beam search, the grids of α a translation has, attribution."""
