use crate::settings::Settings;
use crate::wiring;

pub fn run(settings: &Settings) -> anyhow::Result<()> {
    let pool = wiring::pool(settings)?;
    let applied = wiring::migrate(&pool)?;
    if applied.is_empty() {
        eprintln!("migrations: database already up to date");
    }
    for name in applied {
        eprintln!("migrations: applied {name}");
    }
    Ok(())
}
