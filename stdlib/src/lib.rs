//! acc-stdlib: see docs/ARCHITECTURE.md. Built in a later issue (3: jit-host, stdlib; 4: runtime; 5: jit-ptx).
