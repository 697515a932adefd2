"""DKR: Dockerfiles of training and serving images (article: "Containerization", "Build a portable CUDA training image")."""
