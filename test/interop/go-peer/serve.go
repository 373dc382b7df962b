package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/ttrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	serviceName = "ttrpc.peer.v1.Peer"
	maxCount    = 100000
)

func badArg(format string, a ...any) error {
	return status.Errorf(codes.InvalidArgument, format, a...)
}

func recvRaw(unmarshal func(any) error) ([]byte, error) {
	var r Raw
	if err := unmarshal(&r); err != nil {
		return nil, err
	}
	return r.B, nil
}

func parseUint(p []byte, what string) (uint64, error) {
	n, err := strconv.ParseUint(string(p), 10, 64)
	if err != nil {
		return 0, badArg("%s: not a decimal number: %q", what, p)
	}
	return n, nil
}

func peerService() *ttrpc.ServiceDesc {
	return &ttrpc.ServiceDesc{
		Methods: map[string]ttrpc.Method{
			"Echo": func(ctx context.Context, unmarshal func(any) error) (any, error) {
				p, err := recvRaw(unmarshal)
				if err != nil {
					return nil, err
				}
				return NewRaw(p), nil
			},
			"Fail": func(ctx context.Context, unmarshal func(any) error) (any, error) {
				p, err := recvRaw(unmarshal)
				if err != nil {
					return nil, err
				}
				c, err := strconv.ParseUint(string(p), 10, 32)
				if err != nil {
					return nil, badArg("Fail: bad status code %q", p)
				}
				if c == 0 {
					return NewRaw(nil), nil
				}
				return nil, status.Error(codes.Code(c), "peer failure")
			},
			"Sleep": func(ctx context.Context, unmarshal func(any) error) (any, error) {
				p, err := recvRaw(unmarshal)
				if err != nil {
					return nil, err
				}
				msPart, _, _ := strings.Cut(string(p), ":")
				ms, err := parseUint([]byte(msPart), "Sleep")
				if err != nil {
					return nil, err
				}
				t := time.NewTimer(time.Duration(ms) * time.Millisecond)
				defer t.Stop()
				select {
				case <-t.C:
					return NewRaw(p), nil
				case <-ctx.Done():
					// A plain context error: ttrpc maps it to DEADLINE_EXCEEDED
					// (or CANCELED) with the error text as message.
					return nil, ctx.Err()
				}
			},
			"Metadata": func(ctx context.Context, unmarshal func(any) error) (any, error) {
				if _, err := recvRaw(unmarshal); err != nil {
					return nil, err
				}
				md, _ := ttrpc.GetMetadata(ctx)
				keys := make([]string, 0, len(md))
				for k := range md {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				var list []kv
				for _, k := range keys {
					for _, v := range md[k] {
						list = append(list, kv{k, v})
					}
				}
				return NewRaw(encodeKVList(list)), nil
			},
			"Deadline": func(ctx context.Context, unmarshal func(any) error) (any, error) {
				if _, err := recvRaw(unmarshal); err != nil {
					return nil, err
				}
				dl, ok := ctx.Deadline()
				if !ok {
					return NewRaw([]byte("none")), nil
				}
				return NewRaw([]byte(strconv.FormatInt(time.Until(dl).Nanoseconds(), 10))), nil
			},
		},
		Streams: map[string]ttrpc.Stream{
			"Count": {
				StreamingServer: true,
				Handler: func(ctx context.Context, ss ttrpc.StreamServer) (any, error) {
					var req Raw
					if err := ss.RecvMsg(&req); err != nil {
						return nil, err
					}
					n, err := parseUint(req.B, "Count")
					if err != nil {
						return nil, err
					}
					if n > maxCount {
						return nil, badArg("Count: %d is over %d", n, maxCount)
					}
					for i := uint64(0); i < n; i++ {
						if err := ss.SendMsg(NewRaw([]byte(strconv.FormatUint(i, 10)))); err != nil {
							return nil, err
						}
					}
					// nil: ttrpc ends a server stream with an empty data frame
					// flagged remote-closed | no-data.
					return nil, nil
				},
			},
			"Sum": {
				StreamingClient: true,
				Handler: func(ctx context.Context, ss ttrpc.StreamServer) (any, error) {
					var sum int64
					for {
						var m Raw
						err := ss.RecvMsg(&m)
						if errors.Is(err, io.EOF) {
							return NewRaw([]byte(strconv.FormatInt(sum, 10))), nil
						}
						if err != nil {
							return nil, err
						}
						v, perr := strconv.ParseInt(string(m.B), 10, 64)
						if perr != nil {
							return nil, badArg("Sum: not a decimal number: %q", m.B)
						}
						sum += v
					}
				},
			},
			"Chat": {
				StreamingClient: true,
				StreamingServer: true,
				Handler: func(ctx context.Context, ss ttrpc.StreamServer) (any, error) {
					for {
						var m Raw
						err := ss.RecvMsg(&m)
						if errors.Is(err, io.EOF) {
							return nil, nil
						}
						if err != nil {
							return nil, err
						}
						if err := ss.SendMsg(NewRaw(m.B)); err != nil {
							return nil, err
						}
					}
				},
			},
		},
	}
}

func runServe(args []string) int {
	fs := newFlagSet("serve")
	socket := fs.String("socket", "", "unix socket path to listen on")
	if err := fs.Parse(args); err != nil || *socket == "" {
		fmt.Fprintln(os.Stderr, "usage: go-peer serve --socket PATH")
		return 2
	}
	if err := os.Remove(*socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "remove stale socket: %v\n", err)
		return 1
	}
	l, err := net.Listen("unix", *socket)
	if err != nil {
		fmt.Fprintf(os.Stderr, "listen: %v\n", err)
		return 1
	}
	srv, err := ttrpc.NewServer()
	if err != nil {
		fmt.Fprintf(os.Stderr, "new server: %v\n", err)
		return 1
	}
	srv.RegisterService(serviceName, peerService())

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), l) }()
	fmt.Println("ready")

	select {
	case sig := <-sigs:
		fmt.Fprintf(os.Stderr, "go-peer serve: %v, stopping\n", sig)
		srv.Close()
		os.Remove(*socket)
		return 0
	case err := <-served:
		fmt.Fprintf(os.Stderr, "serve: %v\n", err)
		return 1
	}
}
