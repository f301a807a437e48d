//! The machine and build a result came from: recorded in every row so results from several
//! hosts can be put side by side.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// Host and build metadata.
#[derive(Clone, Debug)]
pub struct Host {
    pub host: String,
    /// Nix-style system name, e.g. `x86_64-linux` or `aarch64-darwin`.
    pub system: String,
    pub os: String,
    pub cpu: String,
    pub cores: usize,
    pub rustc: String,
    pub commit: String,
}

impl Host {
    pub fn detect() -> Host {
        Host {
            host: hostname(),
            system: system(),
            os: os_release(),
            cpu: cpu_model(),
            cores: std::thread::available_parallelism().map_or(1, |cores| cores.get()),
            rustc: env!("SERBENCH_RUSTC").to_string(),
            commit: env!("SERBENCH_COMMIT").to_string(),
        }
    }
}

/// The system name Nix uses for this build target (`darwin` for macOS).
pub fn system() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (output.status.success() && !text.is_empty()).then(|| text.to_string())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .or_else(|| command_output("hostname", &[]))
        .unwrap_or_else(|| "unknown".to_string())
}

fn cpu_model() -> String {
    let from_proc = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|info| {
        info.lines()
            .find(|line| line.starts_with("model name") || line.starts_with("Model"))
            .and_then(|line| line.split_once(':'))
            .map(|(_, model)| model.trim().to_string())
    });
    from_proc
        .or_else(|| command_output("sysctl", &["-n", "machdep.cpu.brand_string"]))
        .unwrap_or_else(|| "unknown".to_string())
}

fn os_release() -> String {
    let pretty = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|release| {
            release
                .lines()
                .find_map(|line| line.strip_prefix("PRETTY_NAME="))
                .map(|name| name.trim_matches('"').to_string())
        });
    let kernel = command_output("uname", &["-sr"]);
    match (pretty, kernel) {
        (Some(pretty), Some(kernel)) => format!("{pretty} ({kernel})"),
        (None, Some(kernel)) => command_output("sw_vers", &["-productVersion"])
            .map_or(kernel.clone(), |version| format!("macOS {version} ({kernel})")),
        (Some(pretty), None) => pretty,
        (None, None) => std::env::consts::OS.to_string(),
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` without a date-time dependency (days-to-civil, Howard Hinnant).
pub fn utc_timestamp(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs()) as i64;
    let (days, second_of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(utc_timestamp(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let leap_day = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_661);
        assert_eq!(utc_timestamp(leap_day), "2000-02-29T01:01:01Z");
    }
}
