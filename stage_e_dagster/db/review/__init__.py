"""Human review: the queue, reviewers' claims and the review page's queries."""
