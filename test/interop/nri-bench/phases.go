package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A phase of a bench runtime's run, as bench/nri/phases.ts defines them:
//
//	fresh:N        N cycles back to back, measured from the first
//	warm           cycles until two consecutive 1,000-cycle windows agree within 5% (at most 60 s)
//	steady:S       S seconds of cycles back to back
//	sparse:MS:N    N cycles, each MS milliseconds after the previous one ended
type phase struct {
	kind   string
	count  int
	millis int
	secs   float64
}

func parsePhases(spec string) []phase {
	var out []phase
	for _, p := range strings.Split(spec, ",") {
		f := strings.Split(p, ":")
		num := func(i int) float64 {
			if i >= len(f) {
				fail("phase %q: too few fields", p)
			}
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil || v <= 0 {
				fail("phase %q: field %d is not a positive number", p, i)
			}
			return v
		}
		switch f[0] {
		case "fresh":
			out = append(out, phase{kind: "fresh", count: int(num(1))})
		case "warm":
			out = append(out, phase{kind: "warm"})
		case "steady":
			out = append(out, phase{kind: "steady", secs: num(1)})
		case "sparse":
			out = append(out, phase{kind: "sparse", millis: int(num(1)), count: int(num(2))})
		default:
			fail("phase %q: unknown kind", p)
		}
	}
	return out
}

// phaseFigures are the keys both bench runtimes print for a phase.
type phaseFigures struct {
	Phase        string    `json:"phase"`
	Cycles       int       `json:"cycles"`
	Seconds      float64   `json:"seconds"`
	EventsPerSec float64   `json:"events_per_sec"`
	P50Us        float64   `json:"p50_us"`
	P99Us        float64   `json:"p99_us"`
	MaxUs        float64   `json:"max_us"`
	Converged    *bool     `json:"converged,omitempty"`
	Windows      []float64 `json:"windows,omitempty"`
	Lat          []float64 `json:"lat,omitempty"`
}

const (
	warmWindow    = 1000
	warmTolerance = 0.05
	warmLimit     = 60 * time.Second
	freshWindow   = 250
)

// stdin carries the driver's go-ahead after each mark.
var stdin = bufio.NewReader(os.Stdin)

// mark prints a mark line and waits for the driver's go-ahead on stdin, so that it can read every
// process's CPU time and memory while no cycle runs.
func mark(in *bufio.Reader, name string) {
	b, _ := json.Marshal(map[string]string{"mark": name})
	fmt.Println(string(b))
	if _, err := in.ReadString('\n'); err != nil {
		fail("runtime: stdin: %v", err)
	}
}

func runPhases(phases []phase, cycle func()) {
	in := stdin
	for i, p := range phases {
		mark(in, fmt.Sprintf("%d", i))
		var lat []float64
		timed := func() {
			t0 := time.Now()
			cycle()
			lat = append(lat, float64(time.Since(t0).Nanoseconds())/1e3)
		}
		start := time.Now()
		fig := phaseFigures{Phase: p.kind}
		switch p.kind {
		case "fresh":
			for n := 0; n < p.count; n++ {
				timed()
			}
			fig.Lat = append([]float64(nil), lat...)
			for w := 0; w+freshWindow <= len(lat); w += freshWindow {
				sum := 0.0
				for _, l := range lat[w : w+freshWindow] {
					sum += l
				}
				fig.Windows = append(fig.Windows, 3*float64(freshWindow)/(sum/1e6))
			}
		case "warm":
			prev := 0.0
			converged := false
			for time.Since(start) < warmLimit {
				w0 := time.Now()
				for n := 0; n < warmWindow; n++ {
					timed()
				}
				rate := warmWindow / time.Since(w0).Seconds()
				fig.Windows = append(fig.Windows, 3*rate)
				if prev > 0 && math.Abs(rate-prev) <= warmTolerance*prev {
					converged = true
					break
				}
				prev = rate
			}
			fig.Converged = &converged
		case "steady":
			end := start.Add(time.Duration(p.secs * float64(time.Second)))
			for time.Now().Before(end) {
				timed()
			}
		case "sparse":
			for n := 0; n < p.count; n++ {
				if n > 0 {
					time.Sleep(time.Duration(p.millis) * time.Millisecond)
				}
				timed()
			}
			fig.Phase = fmt.Sprintf("sparse:%d", p.millis)
			fig.Lat = append([]float64(nil), lat...)
		}
		elapsed := time.Since(start).Seconds()
		sorted := append([]float64(nil), lat...)
		sort.Float64s(sorted)
		pct := func(q float64) float64 { return sorted[int(q*float64(len(sorted)-1))] }
		busy := 0.0
		for _, l := range lat {
			busy += l
		}
		fig.Cycles = len(lat)
		fig.Seconds = elapsed
		fig.EventsPerSec = 3 * float64(len(lat)) / (busy / 1e6)
		fig.P50Us, fig.P99Us, fig.MaxUs = pct(0.5), pct(0.99), sorted[len(sorted)-1]
		b, _ := json.Marshal(fig)
		fmt.Println(string(b))
	}
	mark(in, "end")
}
