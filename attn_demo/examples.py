"""The sentences the page offers: the opening one, the example chips and the long example of "Why
attention?". Each checkpoint's card lists its translations of them (evaluate --examples), so a
teacher can see before class what each model makes of what the page shows."""
EXAMPLES = [
    "The red car is in front of the house.",
    "I don't like coffee.",
    "I have never seen such a beautiful sunset.",
    "We are going to the movies tomorrow evening.",
    "She gave the book to her little brother yesterday.",
    "If you have any questions, please don't hesitate to ask me after the lesson.",
]
LONG_EXAMPLE = ("When I was a child, my grandmother lived in a small house near the sea, and every summer we went to "
                "visit her with my parents and my little brother, who always wanted to swim in the cold water before "
                "breakfast.")  # 41 words: the 41–50 bucket of the "Why attention?" chart
