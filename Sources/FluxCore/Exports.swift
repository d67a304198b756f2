// An app's package, and every module of zflux, imports FluxCore alone and sees the format and the wire
// protocol too. They are modules of their own so that a client in another process can depend on them
// without the programming model, not so that every file must import three modules.
@_exported import FluxFormat
@_exported import FluxProtocol
