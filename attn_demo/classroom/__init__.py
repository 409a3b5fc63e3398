"""The class at work: the rooms of Predict, then reveal, where they are kept, and the quiz."""
