//go:build !linux

package lab

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"

	"github.com/bcfab/bcfab/node/api"
)

// A lab needs Linux network namespaces; elsewhere only planning works.
var errNotLinux = errors.New("a lab needs Linux (network namespaces, veth, AF_XDP)")

func Up(context.Context, Spec, *slog.Logger) (*State, error) { return nil, errNotLinux }
func LowerOwnPriority() error                                { return errNotLinux }
func lowerPriority(int) error                                { return errNotLinux }
func Down(string, string, *slog.Logger) error                { return errNotLinux }
func Status(string, string) (*Report, error)                 { return nil, errNotLinux }
func Stats(string, string, string) (*api.Stats, error)       { return nil, errNotLinux }
func List(string) ([]LabInfo, error)                         { return nil, errNotLinux }
func Command(string, string, ...string) (*exec.Cmd, error)   { return nil, errNotLinux }
func Exec(string, string, []string) error                    { return errNotLinux }
func SetLink(string, string, string, string, LinkConfig) ([]LinkEnd, error) {
	return nil, errNotLinux
}
func SampleHealth(string, string) (*HealthSample, error) { return nil, errNotLinux }
func RunWorkload(context.Context, string, string, WorkloadOptions) (*WorkloadReport, error) {
	return nil, errNotLinux
}
func Snapshot(context.Context, string, string) ([]NodeSnapshot, error) { return nil, errNotLinux }
func StopNode(string, string, string, *slog.Logger) error              { return errNotLinux }
func StartNode(context.Context, string, string, string, *slog.Logger) error {
	return errNotLinux
}
func NotRunning(string, string) error { return nil }
