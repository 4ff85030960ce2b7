// A notebook in a real VS Code (code-server, the built .vsix installed): export.ipynb opens
// in VS Code's own notebook editor (its built-in ipynb support: no Jupyter extension, no
// kernel, nothing from the network); the server's findings reach the cells (squiggles) and the
// Problems panel. What is seen goes to $AOTI_RESULT; screenshots to $AOTI_ARTIFACTS.
'use strict';
const { env, result, stepper, drive } = require('./browser.cjs');

const step = stepper('notebook');

async function run(page, shot) {
    await page.goto(`${env('AOTI_URL')}/?folder=${encodeURIComponent(env('AOTI_FOLDER'))}`);
    await page.waitForSelector('.monaco-workbench');
    step('workbench');
    await page.keyboard.press('Control+P');
    await page.waitForSelector('.quick-input-widget input');
    await page.keyboard.type('export.ipynb');
    await page.waitForSelector('.quick-input-list .monaco-list-row[aria-label*="export.ipynb"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.notebook-editor .cell-list-container');
    await page.waitForFunction(() => [...document.querySelectorAll('.notebook-editor .view-lines')]
        .some((e) => /aoti_load_package/.test(e.textContent.replace(/\u00a0/g, ' '))));
    step('notebook opened');
    await page.waitForSelector('.notebook-editor .monaco-editor .squiggly-error');
    result.squiggles = {
        warning: await page.locator('.notebook-editor .monaco-editor .squiggly-warning').count(),
        error: await page.locator('.notebook-editor .monaco-editor .squiggly-error').count(),
    };
    step('squiggles in the cells');
    await page.keyboard.press('Control+Shift+M');
    await page.waitForSelector('.markers-panel .monaco-tl-row');
    await page.waitForFunction(() => {
        const text = document.querySelector('.markers-panel')?.textContent || '';
        return text.includes('AOTI102') && text.includes('AOTI201');
    });
    result.problemsBefore = await page.$$eval('.markers-panel .monaco-list-row', (rows) => rows.map((r) => r.textContent.trim()));
    await shot('vscode-notebook-problems.png');
    step('problems panel');

    // The device mismatch's quick fix, in its cell: its Problems entry opened (the cursor lands
    // on it, in the cell), Ctrl+., pick it.
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'CUDA input' }).first().click();
    await page.keyboard.press('Enter');
    await page.waitForSelector('.notebook-editor .monaco-editor.focused');
    await page.waitForTimeout(500);
    await page.keyboard.press('Control+.');
    await page.waitForSelector('.action-widget .monaco-list-row');
    result.actions = await page.$$eval('.action-widget .monaco-list-row', (rows) =>
        rows.map((r) => (r.getAttribute('aria-label') || r.textContent).trim()));
    await shot('vscode-notebook-quickfix.png');
    await page.locator('.action-widget .monaco-list-row', { hasText: 'Move it to' }).first().click();
    await page.waitForFunction(() => [...document.querySelectorAll('.notebook-editor .view-lines')]
        .some((e) => /\.to\("cpu"\)/.test(e.textContent.replace(/\u00a0/g, ' '))));
    step('quick fix applied in the cell');
    await page.waitForFunction(() => !(document.querySelector('.markers-panel')?.textContent || '').includes('AOTI102'));
    result.problems = await page.$$eval('.markers-panel .monaco-list-row', (rows) => rows.map((r) => r.textContent.trim()));
    // the Problems panel leaves cells 4-6 out of view: their findings must stay (pushed ones do)
    await page.waitForTimeout(2000);
    result.problemCounts = await page.$$eval('.statusbar-item', (items) =>
        items.map((e) => e.getAttribute('aria-label') || '').find((t) => /Warning/i.test(t)) || null);
    await shot('vscode-notebook.png');
    step('problems after the fix');
}

drive(run);
