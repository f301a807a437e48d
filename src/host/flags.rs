//! Which CPU a binary was compiled for, read from the compiler flags cargo really passed
//! (`CARGO_ENCODED_RUSTFLAGS`, which holds RUSTFLAGS and every `rustflags` of cargo's config):
//! `portable` for the target's baseline CPU, `native` for `-C target-cpu=native`. build.rs
//! includes this file (it uses std only) and compiles the answer into the binary, so every
//! results row says which build measured it without the user having to say so.

/// `portable` when the flags name no CPU and no CPU feature, `native` when they name only
/// `target-cpu=native`; otherwise the CPU options as given (`target-cpu=x86-64-v3`), so a
/// build that is neither is never recorded as one of them. `encoded` is cargo's encoding: the
/// flags separated by the 0x1f byte.
pub fn build_kind(encoded: &str) -> String {
    let mut flags = encoded.split('\x1f').filter(|flag| !flag.is_empty());
    let mut cpu = Vec::new();
    while let Some(flag) = flags.next() {
        let option = match flag {
            "-C" | "--codegen" => flags.next().unwrap_or_default(),
            _ => match flag
                .strip_prefix("--codegen=")
                .or_else(|| flag.strip_prefix("-C"))
            {
                Some(option) => option,
                None => continue,
            },
        };
        if option.starts_with("target-cpu=") || option.starts_with("target-feature=") {
            cpu.push(option);
        }
    }
    match cpu.as_slice() {
        [] => "portable".to_string(),
        ["target-cpu=native"] => "native".to_string(),
        options => options.join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(flags: &[&str]) -> String {
        flags.join("\x1f")
    }

    #[test]
    fn portable_and_native_in_every_spelling_rustc_accepts() {
        assert_eq!(build_kind(""), "portable");
        assert_eq!(
            build_kind(&encoded(&["-C", "debuginfo=1", "--cfg", "x"])),
            "portable"
        );
        for native in [
            encoded(&["-C", "target-cpu=native"]),
            encoded(&["-Ctarget-cpu=native"]),
            encoded(&["--codegen", "target-cpu=native"]),
            encoded(&["--codegen=target-cpu=native", "-C", "opt-level=3"]),
        ] {
            assert_eq!(build_kind(&native), "native", "{native:?}");
        }
    }

    #[test]
    fn any_other_cpu_choice_is_spelled_out() {
        assert_eq!(
            build_kind(&encoded(&["-C", "target-cpu=x86-64-v3"])),
            "target-cpu=x86-64-v3"
        );
        assert_eq!(
            build_kind(&encoded(&[
                "-Ctarget-cpu=native",
                "-C",
                "target-feature=+avx512f"
            ])),
            "target-cpu=native target-feature=+avx512f"
        );
        // `-C` takes the next argument, whatever it looks like; a trailing one names nothing.
        assert_eq!(build_kind(&encoded(&["-C", "-Ctarget-cpu=native"])), "portable");
        assert_eq!(build_kind(&encoded(&["-C", "target-cpu=native", "-C"])), "native");
    }
}
