"""Task glue: custom_dataset, process_results and aggregations referenced from the task YAMLs."""
