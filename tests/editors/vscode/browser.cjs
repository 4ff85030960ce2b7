// What both drivers share: the environment, the steps they log, and one run of Debian's
// Chromium (playwright-core) whose result goes to $AOTI_RESULT as JSON, its failure as a
// screenshot in $AOTI_ARTIFACTS.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require(process.env.PLAYWRIGHT_CORE || 'playwright-core');

const env = (name) => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
};

// result.times: step -> ms since the epoch (its first time)
const result = { steps: [], times: {} };

const stepper = (label) => (name) => {
    result.steps.push(name);
    result.times[name] = result.times[name] ?? Date.now();
    console.log(`[${label} ${new Date().toISOString()}] ${name}`);
};

// run(page, shot) drives the page; any error it throws is the result's `error`
function drive(run) {
    const main = async () => {
        const artifacts = env('AOTI_ARTIFACTS');
        const context = await chromium.launchPersistentContext(path.join(artifacts, 'chromium-profile'), {
            executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
            headless: true,
            viewport: { width: 1400, height: 860 },
            args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                '--disable-background-networking', '--disable-component-update', '--disable-sync'],
        });
        const page = context.pages()[0] || (await context.newPage());
        page.setDefaultTimeout(Number(process.env.AOTI_TIMEOUT_MS || 60000));
        const shot = (name) => page.screenshot({ path: path.join(artifacts, name) });
        try {
            await run(page, shot);
        } catch (error) {
            result.error = String(error && error.stack || error);
            await shot('failure.png').catch(() => {});
        } finally {
            await context.close();
        }
    };
    main()
        .catch((error) => {
            result.error = String(error && error.stack || error);
        })
        .finally(() => {
            fs.writeFileSync(env('AOTI_RESULT'), JSON.stringify(result, null, 2));
            process.exit(result.error ? 1 : 0);
        });
}

module.exports = { env, result, stepper, drive };
