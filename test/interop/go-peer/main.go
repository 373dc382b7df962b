package main

import (
	_ "github.com/containerd/ttrpc"
	_ "google.golang.org/protobuf/proto"
	_ "google.golang.org/protobuf/encoding/protowire"
	_ "google.golang.org/grpc/status"
)

func main() {}
