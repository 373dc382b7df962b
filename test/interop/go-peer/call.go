package main

// The conformance sequence. Every expectation below is what the reference
// server (containerd/ttrpc v1.2.10, i.e. `go-peer serve`) actually answers.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containerd/ttrpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

type checker struct {
	socket         string
	passed, failed int
	out            *json.Encoder
}

func (c *checker) report(name string, pass bool, detail string) {
	if pass {
		c.passed++
	} else {
		c.failed++
	}
	c.out.Encode(struct {
		Check  string `json:"check"`
		Pass   bool   `json:"pass"`
		Detail string `json:"detail"`
	}{name, pass, detail})
}

// run executes one check under a watchdog; a hung or panicking check fails
// without stopping the sequence.
func (c *checker) run(name string, limit time.Duration, fn func() (bool, string)) {
	type result struct {
		pass   bool
		detail string
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{false, fmt.Sprintf("panic: %v", r)}
			}
		}()
		p, d := fn()
		done <- result{p, d}
	}()
	select {
	case r := <-done:
		c.report(name, r.pass, r.detail)
	case <-time.After(limit):
		c.report(name, false, fmt.Sprintf("no result within %v", limit))
	}
}

// timeoutOverride, stored in a context, replaces the timeout_nano the Go
// client would derive from the context deadline (0 removes it).
type timeoutOverride struct{}

func withTimeoutNano(ctx context.Context, ns int64) context.Context {
	return context.WithValue(ctx, timeoutOverride{}, ns)
}

func overrideInterceptor(ctx context.Context, req *ttrpc.Request, resp *ttrpc.Response, _ *ttrpc.UnaryClientInfo, invoke ttrpc.Invoker) error {
	if ns, ok := ctx.Value(timeoutOverride{}).(int64); ok {
		req.TimeoutNano = ns
	}
	return invoke(ctx, req, resp)
}

func dialClient(socket string) (*ttrpc.Client, error) {
	conn, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return ttrpc.NewClient(conn, ttrpc.WithUnaryClientInterceptor(overrideInterceptor)), nil
}

func unary(ctx context.Context, cl *ttrpc.Client, method string, payload []byte) ([]byte, error) {
	var resp Raw
	if err := cl.Call(ctx, serviceName, method, NewRaw(payload), &resp); err != nil {
		return nil, err
	}
	return resp.B, nil
}

func describe(err error) string {
	if err == nil {
		return "OK"
	}
	if st, ok := status.FromError(err); ok {
		return fmt.Sprintf("code=%d (%s) message=%q", st.Code(), st.Code(), st.Message())
	}
	return fmt.Sprintf("non-status error: %v", err)
}

// wantStatus checks err is a status with the code and, unless msg is "",
// exactly that message.
func wantStatus(err error, code codes.Code, msg string) (bool, string) {
	st, ok := status.FromError(err)
	if err == nil || !ok {
		return false, fmt.Sprintf("want code=%d, got %s", code, describe(err))
	}
	pass := st.Code() == code && (msg == "" || st.Message() == msg)
	return pass, describe(err)
}

func wantFrameStatus(f frame, sid uint32, code int32, msg string, msgPrefix bool) (bool, string) {
	if f.Type != frameResponse || f.StreamID != sid {
		return false, fmt.Sprintf("want response on stream %d, got %v", sid, f)
	}
	w, err := decodeResponse(f.Data)
	if err != nil {
		return false, fmt.Sprintf("%v: undecodable response: %v", f, err)
	}
	ok := w.HasStatus && w.Code == code
	if msgPrefix {
		ok = ok && strings.HasPrefix(w.Message, msg)
	} else {
		ok = ok && w.Message == msg
	}
	return ok, fmt.Sprintf("%v %v", f, w)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func ctxT(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	time.AfterFunc(d+time.Second, cancel) // well after the deadline fired
	return ctx
}

// rawEcho sends Echo on sid and expects the matching OK response.
func rawEcho(rc *rawConn, sid uint32, payload string) (bool, string) {
	req := wireRequest{Service: serviceName, Method: "Echo", Payload: []byte(payload)}
	if err := rc.writeFrame(sid, frameRequest, 0, req.encode()); err != nil {
		return false, "write: " + err.Error()
	}
	f, skipped, err := rc.readFrameOn(sid, 5*time.Second)
	if err != nil {
		return false, fmt.Sprintf("echo on stream %d: %v (skipped %d frames)", sid, err, skipped)
	}
	w, err := decodeResponse(f.Data)
	if err != nil || f.Type != frameResponse || (w.HasStatus && w.Code != 0) || string(w.Payload) != payload {
		return false, fmt.Sprintf("echo on stream %d: %v %v err=%v", sid, f, w, err)
	}
	if skipped > 0 {
		return true, fmt.Sprintf("echo on stream %d answered (after %d frames of other streams)", sid, skipped)
	}
	return true, fmt.Sprintf("echo on stream %d answered", sid)
}

// exactRequestPayload sizes an Echo payload so that the encoded
// ttrpc.Request (service, method, payload; no timeout, no metadata) is
// exactly target bytes.
func exactRequestPayload(target int) int {
	fixed := 1 + protowire.SizeBytes(len(serviceName)) + 1 + protowire.SizeBytes(len("Echo")) + 1
	n := target - fixed
	for n > 0 && fixed+protowire.SizeBytes(n) != target {
		n--
	}
	return n
}

func runCall(args []string) int {
	fs := newFlagSet("call")
	socket := fs.String("socket", "", "unix socket path of the server")
	if err := fs.Parse(args); err != nil || *socket == "" {
		fmt.Fprintln(os.Stderr, "usage: go-peer call --socket PATH")
		return 2
	}
	c := &checker{socket: *socket, out: json.NewEncoder(os.Stdout)}
	cl, err := dialClient(*socket)
	if err != nil {
		c.report("connect", false, err.Error())
		c.summary()
		return 1
	}
	defer cl.Close()

	c.unaryChecks(cl)
	c.statusChecks(cl)
	c.deadlineChecks(cl)
	c.metadataChecks(cl)
	c.streamChecks(cl)
	c.rawChecks()

	c.run("connection-still-usable", 10*time.Second, func() (bool, string) {
		got, err := unary(ctxT(5*time.Second), cl, "Echo", []byte("still here"))
		return err == nil && string(got) == "still here", fmt.Sprintf("main connection after all checks: %s", describe(err))
	})

	c.summary()
	if c.failed > 0 {
		return 1
	}
	return 0
}

func (c *checker) summary() {
	c.out.Encode(struct {
		Summary bool `json:"summary"`
		Passed  int  `json:"passed"`
		Failed  int  `json:"failed"`
	}{true, c.passed, c.failed})
}

func (c *checker) unaryChecks(cl *ttrpc.Client) {
	echo := func(name string, payload []byte, ctx func() context.Context) {
		c.run(name, 60*time.Second, func() (bool, string) {
			got, err := unary(ctx(), cl, "Echo", payload)
			if err != nil {
				return false, describe(err)
			}
			if !bytes.Equal(got, payload) {
				return false, fmt.Sprintf("sent %d bytes, got %d different bytes", len(payload), len(got))
			}
			return true, fmt.Sprintf("%d bytes echoed", len(got))
		})
	}
	withDL := func() context.Context { return ctxT(30 * time.Second) }
	echo("echo-0-bytes", nil, withDL)
	echo("echo-1-byte-0x78", []byte{0x78}, withDL)
	echo("echo-1000-bytes", randomBytes(1000), withDL)
	echo("echo-1MiB", randomBytes(1<<20), withDL)

	// No deadline on this one: a timeout_nano field would change the size.
	n := exactRequestPayload(maxFrameData)
	payload := randomBytes(n)
	c.run("echo-request-frame-exactly-4MiB", 60*time.Second, func() (bool, string) {
		size := proto.Size(&ttrpc.Request{Service: serviceName, Method: "Echo", Payload: payload})
		if size != maxFrameData {
			return false, fmt.Sprintf("sizing bug: request would be %d bytes", size)
		}
		got, err := unary(context.Background(), cl, "Echo", payload)
		if err != nil {
			return false, describe(err)
		}
		return bytes.Equal(got, payload), fmt.Sprintf("request frame data %d bytes (payload %d) echoed intact", size, n)
	})

	c.run("client-local-oversize", 30*time.Second, func() (bool, string) {
		// The Go client itself refuses to send a frame over 4 MiB; nothing
		// reaches the server. The status error arrives wrapped, so its
		// message is the whole "rpc error: ..." text.
		_, err := unary(context.Background(), cl, "Echo", randomBytes(n+1))
		ok, d := wantStatus(err, codes.ResourceExhausted,
			"rpc error: code = ResourceExhausted desc = message length 4194305 exceed maximum message size of 4194304")
		return ok, "Go client, before sending: " + d
	})

	c.run("echo-64-concurrent", 30*time.Second, func() (bool, string) {
		var wg sync.WaitGroup
		errs := make([]string, 64)
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				p := []byte(fmt.Sprintf("caller-%02d-", i) + strings.Repeat(string(rune('a'+i%26)), i*37))
				got, err := unary(ctxT(20*time.Second), cl, "Echo", p)
				if err != nil {
					errs[i] = describe(err)
				} else if !bytes.Equal(got, p) {
					errs[i] = fmt.Sprintf("caller %d got another caller's answer (%d bytes)", i, len(got))
				}
			}(i)
		}
		wg.Wait()
		var bad []string
		for _, e := range errs {
			if e != "" {
				bad = append(bad, e)
			}
		}
		if len(bad) > 0 {
			return false, strings.Join(bad, "; ")
		}
		return true, "64 distinct payloads, each answered to its own caller"
	})

	// The slow call's 3 s leave the fast one (sent 5 ms later) room on a loaded machine.
	c.run("out-of-order-completion", 20*time.Second, func() (bool, string) {
		order := make(chan string, 2)
		start := time.Now()
		var wg sync.WaitGroup
		for _, p := range []string{"3000:slow", "10:fast"} {
			wg.Add(1)
			go func(p string) {
				defer wg.Done()
				got, err := unary(ctxT(10*time.Second), cl, "Sleep", []byte(p))
				if err != nil {
					order <- "error " + describe(err)
					return
				}
				order <- fmt.Sprintf("%s@%dms", got, time.Since(start).Milliseconds())
			}(p)
			time.Sleep(5 * time.Millisecond) // slow one is sent first
		}
		wg.Wait()
		first, second := <-order, <-order
		return strings.HasPrefix(first, "10:fast@") && strings.HasPrefix(second, "3000:slow@"),
			fmt.Sprintf("completion order: %s, %s", first, second)
	})
}

func (c *checker) statusChecks(cl *ttrpc.Client) {
	c.run("fail-0-is-ok", 10*time.Second, func() (bool, string) {
		got, err := unary(ctxT(5*time.Second), cl, "Fail", []byte("0"))
		return err == nil && len(got) == 0, fmt.Sprintf("%s, payload %d bytes", describe(err), len(got))
	})
	for code := 1; code <= 16; code++ {
		code := code
		c.run(fmt.Sprintf("fail-%d", code), 10*time.Second, func() (bool, string) {
			_, err := unary(ctxT(5*time.Second), cl, "Fail", []byte(strconv.Itoa(code)))
			return wantStatus(err, codes.Code(code), "peer failure")
		})
	}
	for _, tc := range []struct{ name, method, payload string }{
		{"fail-bad-payload", "Fail", "x"},
		{"fail-empty-payload", "Fail", ""},
		{"sleep-bad-payload", "Sleep", "soon"},
	} {
		tc := tc
		c.run(tc.name, 10*time.Second, func() (bool, string) {
			_, err := unary(ctxT(5*time.Second), cl, tc.method, []byte(tc.payload))
			return wantStatus(err, codes.InvalidArgument, "")
		})
	}
	c.run("unknown-method", 10*time.Second, func() (bool, string) {
		_, err := unary(ctxT(5*time.Second), cl, "Nope", []byte("x"))
		return wantStatus(err, codes.Unimplemented, "method Nope")
	})
	c.run("unknown-service", 10*time.Second, func() (bool, string) {
		var resp Raw
		err := cl.Call(ctxT(5*time.Second), "ttrpc.peer.v1.Missing", "Echo", NewRaw([]byte("x")), &resp)
		return wantStatus(err, codes.Unimplemented, "service ttrpc.peer.v1.Missing")
	})
	c.run("unknown-method-on-stream", 10*time.Second, func() (bool, string) {
		s, err := cl.NewStream(ctxT(5*time.Second), &ttrpc.StreamDesc{StreamingServer: true}, serviceName, "Nope", NewRaw([]byte("1")))
		if err != nil {
			return false, "NewStream: " + err.Error()
		}
		var m Raw
		return wantStatus(s.RecvMsg(&m), codes.Unimplemented, "method Nope")
	})
}

func (c *checker) deadlineChecks(cl *ttrpc.Client) {
	c.run("client-side-deadline", 10*time.Second, func() (bool, string) {
		// timeout_nano removed: only the client's own context expires.
		ctx := withTimeoutNano(ctxT(150*time.Millisecond), 0)
		start := time.Now()
		_, err := unary(ctx, cl, "Sleep", []byte("1000:client-deadline"))
		el := time.Since(start)
		// The error says whose deadline ended it (the server would answer after 1000 ms); how
		// long that took is printed, not judged: it depends on the machine.
		return errors.Is(err, context.DeadlineExceeded),
			fmt.Sprintf("after %dms: %v", el.Milliseconds(), err)
	})
	c.run("server-timeout-nano-sleep", 10*time.Second, func() (bool, string) {
		// Client waits 5 s, but asks the server for 200 ms.
		ctx := withTimeoutNano(ctxT(5*time.Second), int64(200*time.Millisecond))
		start := time.Now()
		_, err := unary(ctx, cl, "Sleep", []byte("2000:server-deadline"))
		el := time.Since(start)
		ok, d := wantStatus(err, codes.DeadlineExceeded, "")
		// DEADLINE_EXCEEDED, not the answer the sleep would give after 2000 ms; and not before
		// the deadline could have passed (timers never fire early).
		return ok && el >= 150*time.Millisecond, fmt.Sprintf("after %dms: %s", el.Milliseconds(), d)
	})
	c.run("deadline-from-timeout-nano", 10*time.Second, func() (bool, string) {
		start := time.Now()
		got, err := unary(ctxT(2*time.Second), cl, "Deadline", nil)
		el := time.Since(start)
		if err != nil {
			return false, describe(err)
		}
		// The server's deadline is its receipt plus timeout_nano (at most 2 s): what it has left
		// lies between 2 s less this round trip and 2 s, however slow the machine.
		v, perr := strconv.ParseInt(string(got), 10, 64)
		return perr == nil && v >= int64(2*time.Second-el) && v <= int64(2*time.Second),
			fmt.Sprintf("client timeout 2s, server saw %q ns left after a %dms round trip", got, el.Milliseconds())
	})
	c.run("deadline-none", 10*time.Second, func() (bool, string) {
		got, err := unary(context.Background(), cl, "Deadline", nil)
		return err == nil && string(got) == "none", fmt.Sprintf("%s, payload %q", describe(err), got)
	})
	c.run("sleep-within-timeout", 10*time.Second, func() (bool, string) {
		got, err := unary(ctxT(5*time.Second), cl, "Sleep", []byte("50:ok"))
		return err == nil && string(got) == "50:ok", fmt.Sprintf("%s, payload %q", describe(err), got)
	})
}

func (c *checker) metadataChecks(cl *ttrpc.Client) {
	c.run("metadata-round-trip", 10*time.Second, func() (bool, string) {
		md := ttrpc.MD{}
		md.Set("zeta", "last")
		md.Set("alpha", "1")
		md.Append("multi", "first", "second")
		md.Set("beta", "")
		ctx := ttrpc.WithMetadata(ctxT(5*time.Second), md)
		got, err := unary(ctx, cl, "Metadata", nil)
		if err != nil {
			return false, describe(err)
		}
		list, derr := decodeKVList(got)
		if derr != nil {
			return false, "undecodable: " + derr.Error()
		}
		want := []kv{{"alpha", "1"}, {"beta", ""}, {"multi", "first"}, {"multi", "second"}, {"zeta", "last"}}
		return fmt.Sprint(list) == fmt.Sprint(want), fmt.Sprintf("got %v", list)
	})
	c.run("metadata-none", 10*time.Second, func() (bool, string) {
		got, err := unary(ctxT(5*time.Second), cl, "Metadata", nil)
		return err == nil && len(got) == 0, fmt.Sprintf("%s, payload %d bytes", describe(err), len(got))
	})
}

func (c *checker) streamChecks(cl *ttrpc.Client) {
	serverStream := &ttrpc.StreamDesc{StreamingServer: true}
	clientStream := &ttrpc.StreamDesc{StreamingClient: true}
	bidi := &ttrpc.StreamDesc{StreamingClient: true, StreamingServer: true}

	for _, n := range []int{0, 5, 1000} {
		n := n
		c.run(fmt.Sprintf("count-%d", n), 20*time.Second, func() (bool, string) {
			s, err := cl.NewStream(ctxT(15*time.Second), serverStream, serviceName, "Count", NewRaw([]byte(strconv.Itoa(n))))
			if err != nil {
				return false, "NewStream: " + err.Error()
			}
			for i := 0; ; i++ {
				var m Raw
				err := s.RecvMsg(&m)
				if errors.Is(err, io.EOF) {
					return i == n, fmt.Sprintf("%d messages then end of stream", i)
				}
				if err != nil {
					return false, fmt.Sprintf("after %d messages: %s", i, describe(err))
				}
				if string(m.B) != strconv.Itoa(i) {
					return false, fmt.Sprintf("message %d is %q", i, m.B)
				}
			}
		})
	}
	c.run("count-bad-payload", 10*time.Second, func() (bool, string) {
		s, err := cl.NewStream(ctxT(5*time.Second), serverStream, serviceName, "Count", NewRaw([]byte("many")))
		if err != nil {
			return false, "NewStream: " + err.Error()
		}
		var m Raw
		return wantStatus(s.RecvMsg(&m), codes.InvalidArgument, "")
	})

	sum := func(name string, items []string, want string) {
		c.run(name, 10*time.Second, func() (bool, string) {
			s, err := cl.NewStream(ctxT(5*time.Second), clientStream, serviceName, "Sum", nil)
			if err != nil {
				return false, "NewStream: " + err.Error()
			}
			for _, it := range items {
				if err := s.SendMsg(NewRaw([]byte(it))); err != nil {
					return false, "SendMsg: " + err.Error()
				}
			}
			if err := s.CloseSend(); err != nil {
				return false, "CloseSend: " + err.Error()
			}
			var m Raw
			if err := s.RecvMsg(&m); err != nil {
				return false, describe(err)
			}
			return string(m.B) == want, fmt.Sprintf("sum of %v = %q", items, m.B)
		})
	}
	sum("sum", []string{"1", "2", "3", "40", "-6"}, "40")
	sum("sum-none", nil, "0")

	c.run("chat", 10*time.Second, func() (bool, string) {
		s, err := cl.NewStream(ctxT(5*time.Second), bidi, serviceName, "Chat", nil)
		if err != nil {
			return false, "NewStream: " + err.Error()
		}
		for i := 0; i < 10; i++ {
			p := []byte(fmt.Sprintf("line %d", i))
			if i == 3 {
				p = nil // an empty message is still a message
			}
			if err := s.SendMsg(NewRaw(p)); err != nil {
				return false, "SendMsg: " + err.Error()
			}
			var m Raw
			if err := s.RecvMsg(&m); err != nil {
				return false, fmt.Sprintf("reply %d: %s", i, describe(err))
			}
			if !bytes.Equal(m.B, p) {
				return false, fmt.Sprintf("reply %d is %q", i, m.B)
			}
		}
		if err := s.CloseSend(); err != nil {
			return false, "CloseSend: " + err.Error()
		}
		var m Raw
		err = s.RecvMsg(&m)
		return errors.Is(err, io.EOF), fmt.Sprintf("10 messages echoed, after CloseSend: %v", err)
	})

	c.run("chat-cancel-mid-stream", 15*time.Second, func() (bool, string) {
		ctx, cancel := context.WithCancel(context.Background())
		s, err := cl.NewStream(ctx, bidi, serviceName, "Chat", nil)
		if err != nil {
			cancel()
			return false, "NewStream: " + err.Error()
		}
		s.SendMsg(NewRaw([]byte("before cancel")))
		var m Raw
		if err := s.RecvMsg(&m); err != nil || string(m.B) != "before cancel" {
			cancel()
			return false, fmt.Sprintf("first reply: %q %s", m.B, describe(err))
		}
		cancel() // nothing goes on the wire: ttrpc has no cancel frame
		rerr := s.RecvMsg(&m)
		if !errors.Is(rerr, context.Canceled) {
			return false, fmt.Sprintf("RecvMsg after cancel: %v", rerr)
		}
		got, err := unary(ctxT(5*time.Second), cl, "Echo", []byte("after cancel"))
		if err != nil || string(got) != "after cancel" {
			return false, "echo on same connection after cancel: " + describe(err)
		}
		s2, err := cl.NewStream(ctxT(5*time.Second), serverStream, serviceName, "Count", NewRaw([]byte("3")))
		if err != nil {
			return false, "NewStream: " + err.Error()
		}
		n := 0
		for {
			err := s2.RecvMsg(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return false, "count after cancel: " + describe(err)
			}
			n++
		}
		return n == 3, "RecvMsg after cancel: context canceled; Echo and Count 3 on the same connection still work"
	})

	c.run("count-early-close", 20*time.Second, func() (bool, string) {
		// A Go client cannot abandon a server stream on a shared connection
		// (its receive loop would block on the unread stream), so this uses a
		// connection of its own and closes it: the only cancel on the wire.
		cl2, err := dialClient(c.socket)
		if err != nil {
			return false, err.Error()
		}
		ctx, cancel := context.WithCancel(context.Background())
		s, err := cl2.NewStream(ctx, serverStream, serviceName, "Count", NewRaw([]byte("100000")))
		if err != nil {
			cancel()
			cl2.Close()
			return false, "NewStream: " + err.Error()
		}
		for i := 0; i < 3; i++ {
			var m Raw
			if err := s.RecvMsg(&m); err != nil || string(m.B) != strconv.Itoa(i) {
				cancel()
				cl2.Close()
				return false, fmt.Sprintf("message %d: %q %s", i, m.B, describe(err))
			}
		}
		cancel()
		cl2.Close()
		got, err := unary(ctxT(5*time.Second), cl, "Echo", []byte("after early close"))
		if err != nil || string(got) != "after early close" {
			return false, "echo on main connection: " + describe(err)
		}
		return true, "read 3 of 100000, cancelled and closed that connection; server keeps serving"
	})
}

func (c *checker) rawChecks() {
	withRaw := func(name string, limit time.Duration, fn func(rc *rawConn) (bool, string)) {
		c.run(name, limit, func() (bool, string) {
			rc, err := dialRaw(c.socket)
			if err != nil {
				return false, "dial: " + err.Error()
			}
			defer rc.Close()
			return fn(rc)
		})
	}
	req := func(method, payload string) []byte {
		return wireRequest{Service: serviceName, Method: method, Payload: []byte(payload)}.encode()
	}

	withRaw("raw-unary-ok-frame", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, 0, req("Echo", "abc"))
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		w, derr := decodeResponse(f.Data)
		ok := derr == nil && f.StreamID == 1 && f.Type == frameResponse && f.Flags == 0 &&
			!w.HasStatus && string(w.Payload) == "abc"
		return ok, fmt.Sprintf("%v data=%s: %v", f, hex.EncodeToString(f.Data), w)
	})

	withRaw("raw-unary-error-frame", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, 0, req("Fail", "9"))
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		ok, d := wantFrameStatus(f, 1, 9, "peer failure", false)
		w, _ := decodeResponse(f.Data)
		return ok && f.Flags == 0 && len(w.Payload) == 0, fmt.Sprintf("%s data=%s", d, hex.EncodeToString(f.Data))
	})

	withRaw("raw-oversize-request", 60*time.Second, func(rc *rawConn) (bool, string) {
		wrote := make(chan error, 1)
		go func() {
			b := append(frameHeader(maxFrameData+1, 1, frameRequest, 0), make([]byte, maxFrameData+1)...)
			wrote <- rc.writeRawBytes(b)
		}()
		f, err := rc.readFrame(30 * time.Second)
		if err != nil {
			return false, "no answer: " + err.Error()
		}
		if werr := <-wrote; werr != nil {
			return false, "write: " + werr.Error()
		}
		ok, d := wantFrameStatus(f, 1, int32(codes.ResourceExhausted), "message length 4194305 exceed maximum message size of 4194304", false)
		eok, ed := rawEcho(rc, 3, "after oversize")
		return ok && eok, d + "; " + ed
	})

	withRaw("raw-even-stream-id", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(2, frameRequest, 0, req("Echo", "even"))
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		ok, d := wantFrameStatus(f, 2, int32(codes.InvalidArgument), "StreamID must be odd for client initiated streams", false)
		eok, ed := rawEcho(rc, 1, "after even")
		return ok && eok, d + "; " + ed
	})

	withRaw("raw-unknown-frame-type", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, 0x7f, 0, []byte("mystery"))
		if f, err := rc.readFrame(300 * time.Millisecond); err != errNoFrame {
			return false, fmt.Sprintf("expected silence, got %v err=%v", f, err)
		}
		eok, ed := rawEcho(rc, 3, "after unknown type")
		return eok, "type 0x7f on odd stream 1: no answer, ignored; " + ed
	})

	withRaw("raw-unknown-frame-type-even-id", 10*time.Second, func(rc *rawConn) (bool, string) {
		// The parity check runs before the type is looked at.
		rc.writeFrame(2, 0x7f, 0, []byte("mystery"))
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		ok, d := wantFrameStatus(f, 2, int32(codes.InvalidArgument), "StreamID must be odd for client initiated streams", false)
		eok, ed := rawEcho(rc, 1, "after unknown even")
		return ok && eok, d + "; " + ed
	})

	withRaw("raw-undecodable-request", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, 0, []byte{0xff, 0xff, 0xff})
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		ok, d := wantFrameStatus(f, 1, int32(codes.InvalidArgument), "unmarshal request error: ", true)
		// The failed request still consumed stream id 1.
		eok, ed := rawEcho(rc, 3, "after garbage")
		return ok && eok, d + "; " + ed
	})

	withRaw("raw-empty-request", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, 0, nil)
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		return wantFrameStatus(f, 1, int32(codes.Unimplemented), "service ", false)
	})

	withRaw("raw-stream-id-reuse", 10*time.Second, func(rc *rawConn) (bool, string) {
		var details []string
		ok := true
		e1, d1 := rawEcho(rc, 5, "first")
		details = append(details, d1)
		ok = ok && e1
		for _, sid := range []uint32{5, 3} {
			rc.writeFrame(sid, frameRequest, 0, req("Echo", "again"))
			f, err := rc.readFrame(5 * time.Second)
			if err != nil {
				return false, err.Error()
			}
			fok, d := wantFrameStatus(f, sid, int32(codes.InvalidArgument), "StreamID cannot be re-used and must increment", false)
			ok = ok && fok
			details = append(details, d)
		}
		e2, d2 := rawEcho(rc, 7, "next")
		details = append(details, d2)
		return ok && e2, strings.Join(details, "; ")
	})

	withRaw("raw-count-frames", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, flagRemoteClosed, req("Count", "2"))
		var got []string
		ok := true
		want := []struct {
			flags byte
			data  string
		}{{0, "0"}, {0, "1"}, {flagRemoteClosed | flagNoData, ""}}
		for _, w := range want {
			f, err := rc.readFrame(5 * time.Second)
			if err != nil {
				return false, strings.Join(got, ", ") + ": " + err.Error()
			}
			got = append(got, fmt.Sprintf("%v %q", f, f.Data))
			ok = ok && f.StreamID == 1 && f.Type == frameData && f.Flags == w.flags && string(f.Data) == w.data
		}
		if f, err := rc.readFrame(200 * time.Millisecond); err != errNoFrame {
			return false, fmt.Sprintf("unexpected extra %v err=%v", f, err)
		}
		return ok, strings.Join(got, ", ")
	})

	withRaw("raw-sum-frames", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, flagRemoteOpen, wireRequest{Service: serviceName, Method: "Sum"}.encode())
		rc.writeFrame(1, frameData, 0, []byte("1"))
		rc.writeFrame(1, frameData, 0, []byte("2"))
		rc.writeFrame(1, frameData, flagRemoteClosed|flagNoData, nil)
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		w, derr := decodeResponse(f.Data)
		ok := derr == nil && f.StreamID == 1 && f.Type == frameResponse && f.Flags == 0 && !w.HasStatus && string(w.Payload) == "3"
		return ok, fmt.Sprintf("%v %v payload=%q", f, w, w.Payload)
	})

	withRaw("raw-chat-frames", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, flagRemoteOpen, wireRequest{Service: serviceName, Method: "Chat"}.encode())
		rc.writeFrame(1, frameData, 0, []byte("hi"))
		f1, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		rc.writeFrame(1, frameData, flagRemoteClosed|flagNoData, nil)
		f2, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		ok := f1.Type == frameData && f1.Flags == 0 && string(f1.Data) == "hi" &&
			f2.Type == frameData && f2.Flags == flagRemoteClosed|flagNoData && f2.Length == 0
		return ok, fmt.Sprintf("%v %q, then after client close %v", f1, f1.Data, f2)
	})

	withRaw("raw-sum-request-payload-is-first-item", 10*time.Second, func(rc *rawConn) (bool, string) {
		// A payload in the Request of a client-streaming call is handed to
		// the handler as its first message.
		rc.writeFrame(1, frameRequest, flagRemoteOpen, req("Sum", "7"))
		rc.writeFrame(1, frameData, 0, []byte("1"))
		rc.writeFrame(1, frameData, flagRemoteClosed|flagNoData, nil)
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		w, derr := decodeResponse(f.Data)
		ok := derr == nil && f.Type == frameResponse && !w.HasStatus && string(w.Payload) == "8"
		return ok, fmt.Sprintf("request payload \"7\" + data \"1\": %v %v payload=%q", f, w, w.Payload)
	})

	withRaw("raw-chat-empty-data-vs-no-data-flag", 20*time.Second, func(rc *rawConn) (bool, string) {
		// A zero-length data frame is an (empty) message; one flagged
		// no-data without remote-closed is dropped.
		rc.writeFrame(1, frameRequest, flagRemoteOpen, wireRequest{Service: serviceName, Method: "Chat"}.encode())
		rc.writeFrame(1, frameData, 0, nil)
		rc.writeFrame(1, frameData, flagNoData, nil)
		rc.writeFrame(1, frameData, flagRemoteClosed|flagNoData, nil)
		// The answers up to the one flagged remote-closed, however slowly
		// they come; then a short wait for anything after it.
		var got []string
		var frames []frame
		for closed := false; !closed && len(frames) <= 2; {
			f, err := rc.readFrame(5 * time.Second)
			if err == errNoFrame {
				break
			}
			if err != nil {
				return false, err.Error()
			}
			frames = append(frames, f)
			got = append(got, f.String())
			closed = f.Flags&flagRemoteClosed != 0
		}
		if f, err := rc.readFrame(500 * time.Millisecond); err == nil {
			frames = append(frames, f)
			got = append(got, f.String())
		} else if err != errNoFrame {
			return false, err.Error()
		}
		ok := len(frames) == 2 &&
			frames[0].Type == frameData && frames[0].Flags == 0 && frames[0].Length == 0 &&
			frames[1].Type == frameData && frames[1].Flags == flagRemoteClosed|flagNoData && frames[1].Length == 0
		return ok, strings.Join(got, ", ")
	})

	withRaw("raw-client-response-frame-ignored", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameResponse, 0, []byte{0x12, 0x01, 0x78})
		if f, err := rc.readFrame(300 * time.Millisecond); err != errNoFrame {
			return false, fmt.Sprintf("expected silence, got %v err=%v", f, err)
		}
		eok, ed := rawEcho(rc, 3, "after response frame")
		return eok, "response-type frame from the client: no answer; " + ed
	})

	withRaw("raw-unary-request-flags-ignored", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, flagRemoteOpen, req("Echo", "ro"))
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		w, derr := decodeResponse(f.Data)
		ok := derr == nil && f.Type == frameResponse && !w.HasStatus && string(w.Payload) == "ro"
		return ok, fmt.Sprintf("unary request flagged remote-open: %v %v", f, w)
	})

	withRaw("raw-sum-bad-item", 10*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, flagRemoteOpen, wireRequest{Service: serviceName, Method: "Sum"}.encode())
		rc.writeFrame(1, frameData, 0, []byte("seven"))
		f, err := rc.readFrame(5 * time.Second)
		if err != nil {
			return false, err.Error()
		}
		// Nothing more may be sent on stream 1 now (see report).
		ok, d := wantFrameStatus(f, 1, int32(codes.InvalidArgument), "", true)
		eok, ed := rawEcho(rc, 3, "after bad item")
		return ok && eok, d + "; " + ed
	})

	withRaw("raw-count-abandoned", 20*time.Second, func(rc *rawConn) (bool, string) {
		rc.writeFrame(1, frameRequest, flagRemoteClosed, req("Count", "100000"))
		for i := 0; i < 3; i++ {
			f, err := rc.readFrame(5 * time.Second)
			if err != nil || f.StreamID != 1 || string(f.Data) != strconv.Itoa(i) {
				return false, fmt.Sprintf("message %d: %v %q err=%v", i, f, f.Data, err)
			}
		}
		// The client goes quiet on stream 1 (ttrpc cannot cancel it) and
		// asks something else on the same connection.
		eok, ed := rawEcho(rc, 3, "while count runs")
		return eok, "read 3 of Count 100000, then " + ed
	})
}
