"""IMG: container images of workloads (article: "Containerization", "Build a portable CUDA training image")."""
