package resp

import (
	"context"
	"testing"
	"time"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/engine"
	"github.com/cmpbench/cmpbench/workloads/memtier"
)

// BenchmarkEngineRESP runs the engine's closed loop with this adapter against a real
// redis-server: b.N operations over 50 connections, SET:GET 1:10, 256 B values. Run
// with -cpuprofile to see where client CPU goes.
// BenchmarkEngineRESP drives a local redis-server through the engine over each
// data path: raw connections on the event loops, the codec over TLS in worker
// goroutines, and rueidis, plain and over TLS.
func BenchmarkEngineRESP(b *testing.B) {
	for _, dp := range dataPaths {
		b.Run(dp.name, func(b *testing.B) { benchEngine(b, serverFor(b, dp.tls, dp.driver)) })
	}
}

func benchEngine(b *testing.B, sys core.SystemConfig) {
	tg, err := Adapter{}.Open(context.Background(), sys)
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close(context.Background())
	mix := memtier.Spec{SetRatio: 1, GetRatio: 10, SetPattern: 'R', GetPattern: 'R', KeyMin: 1, KeyMax: 100_000, KeyPrefix: "kv_", ValueMin: 256, ValueMax: 256}
	spec := core.PhaseSpec{Name: "bench", Kind: core.PhaseMeasured, Connections: 50, Duration: time.Hour, Ops: int64(b.N), Workload: mix}
	b.ReportAllocs()
	b.ResetTimer()
	end := engine.Run(context.Background(), engine.Config{
		Spec:      spec,
		Connect:   tg.Connect,
		NewSource: func(w int) (core.OpSource, error) { return memtier.New(mix, 1, w, spec.Connections), nil },
	})
	if end.Status != core.StatusOK {
		b.Fatal(end.Error)
	}
	b.ReportMetric((end.CPUUser+end.CPUSystem).Seconds()/float64(b.N)*1e6, "cpu-s/Mop")
}
