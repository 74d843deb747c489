//! Sentinel failover: to be written once `redis+sentinel://` URLs are in.
