"""Human review decisions of an output set: the review log and what it says about each image."""
