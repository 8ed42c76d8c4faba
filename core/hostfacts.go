package core

import (
	"runtime"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"
)

// HostFacts describes the machine that generated the load.
type HostFacts struct {
	Hostname        string `json:"hostname"`
	OS              string `json:"os"`
	Platform        string `json:"platform"`
	PlatformVersion string `json:"platform_version"`
	Kernel          string `json:"kernel"`
	Arch            string `json:"arch"`
	CPUModel        string `json:"cpu_model"`
	CPUs            int    `json:"cpus"`
	MemoryBytes     uint64 `json:"memory_bytes"`
	GoVersion       string `json:"go_version"`
}

// CollectHostFacts reads the host's facts; what cannot be read stays empty.
func CollectHostFacts() HostFacts {
	f := HostFacts{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if hi, err := host.Info(); err == nil {
		f.Hostname, f.Platform, f.PlatformVersion, f.Kernel = hi.Hostname, hi.Platform, hi.PlatformVersion, hi.KernelVersion
	}
	if ci, err := cpu.Info(); err == nil && len(ci) > 0 {
		f.CPUModel = ci[0].ModelName
	}
	if vm, err := mem.VirtualMemory(); err == nil {
		f.MemoryBytes = vm.Total
	}
	return f
}
