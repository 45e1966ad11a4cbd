"""`git checkpoint run`: the loop of save, attempt, verify, promote or roll back, and
the commands it prints for the user to go on with."""
