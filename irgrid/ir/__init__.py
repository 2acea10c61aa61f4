"""The OpenVINO IR as irgrid sees it: element types, dims, the graph model, the reader and a writer."""
