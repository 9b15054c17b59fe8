//go:build !linux

package xdp

// NewUMEM returns ErrNotSupported.
func NewUMEM(cfg UMEMConfig) (*UMEM, error) { return nil, ErrNotSupported }

// NewSocket returns ErrNotSupported.
func (u *UMEM) NewSocket(cfg SocketConfig) (*Socket, error) { return nil, ErrNotSupported }

// Close does nothing.
func (u *UMEM) Close() error { return nil }

// Kick returns ErrNotSupported.
func (s *Socket) Kick() error { return ErrNotSupported }

// Stats returns ErrNotSupported.
func (s *Socket) Stats() (Stats, error) { return Stats{}, ErrNotSupported }

// Close does nothing.
func (s *Socket) Close() error { return nil }

// SetTxChecksum returns ErrNotSupported.
func SetTxChecksum(ifname string, on bool) error { return ErrNotSupported }

// TxChecksum returns ErrNotSupported.
func TxChecksum(ifname string) (bool, error) { return false, ErrNotSupported }

// SetTxVLAN is not supported off Linux.
func SetTxVLAN(ifname string, on bool) error { return ErrNotSupported }

// TxVLAN is not supported off Linux.
func TxVLAN(ifname string) (bool, error) { return false, ErrNotSupported }

// SetGRO is not supported off Linux.
func SetGRO(ifname string, on bool) error { return ErrNotSupported }

// GRO is not supported off Linux.
func GRO(ifname string) (bool, error) { return false, ErrNotSupported }
