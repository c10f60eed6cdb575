// Network's C API for protocol options, the part apps call without making a connection:
// `_ = nw_tls_create_options()` in an app's `init` or `didFinishLaunching` (a workaround
// many apps added with Xcode 26, which loads TLS early; found by an outside compile probe).
// Connections are URLSession's here (docs/porting.md, "Network paths"): the options are
// made and configure nothing.
import Foundation

/// Options of a protocol (Apple: Network's `nw_protocol_options_t`): opaque, as Apple's, and
/// holding nothing here (nothing reads them).
public final class nw_protocol_options_t: Sendable {
    init() {}
}

/// Options of TLS (Apple: `nw_tls_create_options()`).
public func nw_tls_create_options() -> nw_protocol_options_t { nw_protocol_options_t() }

/// Options of TCP (Apple: `nw_tcp_create_options()`).
public func nw_tcp_create_options() -> nw_protocol_options_t { nw_protocol_options_t() }

/// Options of UDP (Apple: `nw_udp_create_options()`).
public func nw_udp_create_options() -> nw_protocol_options_t { nw_protocol_options_t() }
