"""Stage 3, methods: the method registry, prompt formats, and the plan of each method's generations."""
